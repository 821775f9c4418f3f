### 命令中为玩家输入的名字：可能指多名玩家的名字，以及不能被所有人读成同一个样子的新玩家
### 名字（daemon/src/names.rs、daemon/src/router/names.rs）。名字按输入原样显示（转义后）。
### 消息 id 以文件名开头。

names-ambiguous = { $word } 可能是 { $players }；请用其中一个标识指明。
names-or = {" 或 "}
names-refused = { $why }：玩家名字只能由大家读起来都一样的字母、数字和普通标点组成；请按对方所在网络显示的昵称输入，或者请对方先说句话，让我认识他们。
names-empty = 玩家名字不能为空
names-too-long = `{ $name }` 有 { $count } 个字符，超过了玩家名字最多的 { $max } 个；请输入不超过 { $max } 个字符的名字
names-control = `{ $name }` 含有控制字符（{ $code }）
names-invisible = `{ $name }` 含有不可见字符（{ $code }）
names-bidi = `{ $name }` 含有会使周围文字反向显示的字符（{ $code }）
names-look-alike = `{ $name }` 混用了不同文字中形似的字母（它看起来像 `{ $looks }`）
names-which = 哪一个 { $word }：{ $members }？请输入“输入”后面的写法指明。
names-which-member = { $name }（在 { $network }，输入 { $id }）
names-logged-out = { $name } 在房间里，但没有登录 { $network } 的服务账号，而那里只有登录的玩家才能玩：请对方先登录（例如 /msg NickServ IDENTIFY …），然后再指名一次。
names-asking = 我正在向 { $network } 查询 { $name } 登录的服务账号：请稍后再指名一次。
names-nobody-present = 本房间里没有叫 `{ $name }` 的人：请用玩家的昵称或 Matrix 用户标识指名，或者用这里某人的显示名。
