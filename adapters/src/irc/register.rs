//! Registering on a server and logging in, without I/O: the session shows
//! [`Registration`] every message and carries out the [`Action`]s it answers.
//!
//! Order: `PASS`, `CAP LS 302`, `NICK`, `USER`; the whole `LS` reply is read
//! ([`cap`](super::cap)), only offered capabilities are requested, then SASL
//! ([`sasl`](super::sasl)) when configured and offered, then `CAP END` exactly once. A
//! taken nick moves to the next alternate until registered; afterwards the configured
//! nick is taken back when it frees (`MONITOR`, a QUIT or NICK seen, or NickServ
//! `REGAIN` when configured). NickServ `IDENTIFY` is the fallback where SASL is not
//! offered, when configured. With `login_required` nobody plays logged out: a login
//! that fails or is not offered, or a logout later, ends the connection
//! ([`Action::Fail`]) and the supervisor retries with backoff.

use irc::client::prelude::{Command, Message, Response};
use irc::proto::CapSubCommand;

use super::cap::{self, Caps, Step};
use super::members::fold;
use super::options::IrcOptions;
use super::sasl::{Login, Mechanism};
use super::sts;

/// What the session must do.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Write this.
    Send(Command),
    /// End the connection: the bot is not logged in where it must be (why).
    Fail(String),
    /// End the connection: the server refuses the bot (why), e.g. every nick is taken.
    Refused(String),
    /// Reconnect with TLS on this port (a plaintext connection saw an STS policy).
    Upgrade(u16),
    /// Over TLS, the server's STS policy asks to keep TLS this long (zero: forget it).
    Policy(std::time::Duration),
}

/// One connection's registration and login.
pub struct Registration {
    nicks: Vec<String>,
    /// Index in `nicks` of the nick last asked for during registration.
    tried: usize,
    nick: String,
    tls: bool,
    caps: Caps,
    options: IrcOptions,
    login: Option<Login>,
    /// Services account the bot is logged in to.
    account: Option<String>,
    /// SASL was tried on this connection (it is started once).
    sasl_started: bool,
    /// Waiting for NickServ to answer IDENTIFY.
    identify_sent: bool,
    /// Log in with NickServ IDENTIFY after the MOTD (SASL is not offered or failed).
    identify_pending: bool,
    registered: bool,
    monitor: bool,
    whox: bool,
}

impl Registration {
    /// Registration for `options` over a TLS (or plaintext) connection.
    pub fn new(options: &IrcOptions, tls: bool) -> Registration {
        let nick = options.nicks.first().cloned().unwrap_or_default();
        Registration {
            nicks: options.nicks.clone(),
            tried: 0,
            nick,
            tls,
            caps: Caps::new(options.sasl.is_some()),
            options: options.clone(),
            login: None,
            account: None,
            sasl_started: false,
            identify_sent: false,
            identify_pending: false,
            registered: false,
            monitor: false,
            whox: false,
        }
    }

    /// The first lines: PASS, `CAP LS 302`, NICK and USER.
    pub fn start(&self) -> Vec<Command> {
        let mut lines = Vec::new();
        if let Some(password) = &self.options.password {
            lines.push(Command::PASS(password.clone()));
        }
        lines.push(Command::CAP(None, CapSubCommand::LS, None, Some("302".to_owned())));
        lines.push(Command::NICK(self.nick.clone()));
        lines.push(Command::USER(
            self.options.username.clone(),
            "0".to_owned(),
            self.options.realname.clone(),
        ));
        lines
    }

    /// The server welcomed the bot (RPL_WELCOME).
    pub fn registered(&self) -> bool {
        self.registered
    }

    /// The bot's nick now.
    pub fn nick(&self) -> &str {
        &self.nick
    }

    /// The capability negotiation.
    pub fn caps(&self) -> &Caps {
        &self.caps
    }

    /// The server answers WHOX (`WHO #chan %tna`).
    pub fn whox(&self) -> bool {
        self.whox
    }

    /// Logged in to this services account.
    pub fn account(&self) -> Option<&str> {
        self.account.as_deref()
    }

    /// Whether the bot may play: logged in, or not required to be.
    pub fn may_play(&self) -> bool {
        !self.options.login_required || self.account.is_some() || !self.logs_in()
    }

    /// A login is configured at all.
    fn logs_in(&self) -> bool {
        self.options.sasl.is_some()
    }

    /// Whether the accounts of players can be known here: `account-tag`, SASL (so
    /// services run), `account-notify` with `extended-join`, or WHOX.
    pub fn accounts_known(&self) -> bool {
        let caps = &self.caps;
        caps.offers("account-tag")
            || caps.offers("sasl")
            || (caps.offers("account-notify") && caps.offers("extended-join"))
            || self.whox
    }

    /// Reads one message from the server.
    pub fn read(&mut self, message: &Message) -> Vec<Action> {
        let mut actions = Vec::new();
        match &message.command {
            Command::CAP(_, sub, third, fourth) => {
                self.cap_reply(sub, &cap::params(third, fourth), &mut actions)
            }
            Command::AUTHENTICATE(chunk) => self.authenticate(chunk, &mut actions),
            Command::Response(Response::RPL_SASLSUCCESS, _) => self.sasl_succeeded(&mut actions),
            Command::Response(Response::ERR_SASLALREADY, _) => {
                self.login = None;
                self.end_caps(&mut actions);
            }
            // [nick, mechanisms, "are available SASL mechanisms"]
            Command::Response(Response::RPL_SASLMECHS, args) => {
                if let (Some(login), Some(list)) = (&mut self.login, args.get(1)) {
                    login.listed(list);
                }
            }
            Command::Response(
                code @ (Response::ERR_SASLFAIL | Response::ERR_SASLTOOLONG | Response::ERR_NICKLOCKED),
                args,
            ) => self.sasl_refused(code, args, &mut actions),
            Command::Response(Response::ERR_SASLABORT, _) => {}
            // [nick, nick!user@host, account, text]
            Command::Response(Response::RPL_LOGGEDIN, args) => {
                self.account = args.get(2).cloned();
                self.identify_sent = false;
                tracing::info!(network = %self.options.network, account = ?self.account, "logged in to services");
            }
            Command::Response(Response::RPL_LOGGEDOUT, _) => {
                self.account = None;
                if self.registered && self.options.login_required && self.logs_in() {
                    actions.push(Action::Fail("services logged the bot out".to_owned()));
                }
            }
            Command::ACCOUNT(name)
                if message.source_nickname().is_some_and(|n| fold(n) == fold(&self.nick)) =>
            {
                self.account = (name != "*").then(|| name.clone());
                if self.account.is_none() && self.options.login_required && self.logs_in() {
                    actions.push(Action::Fail("services logged the bot out".to_owned()));
                }
            }
            // [nick, text]: the first word of the text may be the nick the server gave.
            Command::Response(Response::RPL_WELCOME, args) => self.welcomed(args, &mut actions),
            Command::Response(Response::RPL_ISUPPORT, args) => self.supported(args),
            Command::Response(Response::RPL_ENDOFMOTD | Response::ERR_NOMOTD, _) => {
                if self.identify_pending && !self.identify_sent {
                    self.identify(&mut actions);
                }
                self.regain(&mut actions);
            }
            Command::Response(
                Response::ERR_NICKNAMEINUSE | Response::ERR_ERRONEOUSNICKNAME | Response::ERR_UNAVAILRESOURCE,
                args,
            ) if !self.registered => self.nick_unavailable(args, &mut actions),
            Command::NICK(new) if message.source_nickname().is_some_and(|n| fold(n) == fold(&self.nick)) => {
                self.nick = new.clone();
            }
            // Someone gave the configured nick up.
            Command::NICK(_) | Command::QUIT(_)
                if self.registered
                    && message
                        .source_nickname()
                        .is_some_and(|n| self.wanted_nick().is_some_and(|w| fold(n) == fold(w))) =>
            {
                self.take_back(&mut actions);
            }
            // [nick, targets]
            Command::Response(Response::RPL_MONOFFLINE, args) => self.monitored_offline(args, &mut actions),
            _ => {}
        }
        actions
    }

    /// A `CAP` reply: its steps, then, once the negotiation may move on, what comes next.
    fn cap_reply(&mut self, sub: &CapSubCommand, params: &[&str], actions: &mut Vec<Action>) {
        let steps = self.caps.read(sub, params);
        for step in steps {
            self.step(step, actions);
        }
        if matches!(sub, CapSubCommand::LS | CapSubCommand::ACK | CapSubCommand::NAK | CapSubCommand::DEL) {
            self.settle(actions);
        }
    }

    /// RPL_SASLSUCCESS: logged in, once the mechanism agrees the server proved itself;
    /// then `CAP END`.
    fn sasl_succeeded(&mut self, actions: &mut Vec<Action>) {
        let proven = self.login.as_ref().map_or(Ok(()), Login::succeeded);
        self.login = None;
        match proven {
            Ok(()) => {
                // 900 names the account; a server that skips it logged us in all the same.
                if self.account.is_none() {
                    self.account = self.options.sasl.as_ref().map(|s| s.account.clone());
                }
                tracing::info!(network = %self.options.network, account = ?self.account, "logged in with SASL");
            }
            Err(error) => {
                self.account = None;
                self.give_up(&error.to_string(), actions);
                return;
            }
        }
        self.end_caps(actions);
    }

    /// ERR_SASLFAIL, ERR_SASLTOOLONG or ERR_NICKLOCKED: the next mechanism, or SASL failed.
    fn sasl_refused(&mut self, code: &Response, args: &[String], actions: &mut Vec<Action>) {
        let said = args.last().cloned().unwrap_or_default();
        let mechanism = self.login.as_ref().and_then(Login::current).map_or("SASL", Mechanism::name);
        tracing::warn!(network = %self.options.network, reply = ?code, mechanism, "{said}");
        if self.login.is_some() && *code != Response::ERR_NICKLOCKED {
            self.next_mechanism(&format!("{mechanism}: {said}"), actions);
        } else {
            self.login = None;
            self.sasl_failed(&format!("{said} ({code:?})"), actions);
        }
    }

    /// RPL_WELCOME `[nick, text]`: registered, under the nick the server gave.
    fn welcomed(&mut self, args: &[String], actions: &mut Vec<Action>) {
        if let Some(nick) = args.first() {
            self.nick = nick.clone();
        }
        self.registered = true;
        if !self.caps.end() {
            // CAP END went already.
        } else if self.logs_in() && self.account.is_none() && !self.identify_pending {
            // The server ignored CAP: no capabilities, no SASL.
            self.sasl_failed("the server does not support capability negotiation (so no SASL)", actions);
        }
    }

    /// RPL_ISUPPORT: whether the server offers `MONITOR` and `WHOX`.
    fn supported(&mut self, args: &[String]) {
        for token in args.iter().skip(1) {
            let name = token.split('=').next().unwrap_or_default();
            self.monitor |= name == "MONITOR";
            self.whox |= name == "WHOX";
        }
    }

    /// A nick taken or refused before registering: the next configured one, or refused
    /// when none is left.
    fn nick_unavailable(&mut self, args: &[String], actions: &mut Vec<Action>) {
        let taken = args.get(1).cloned().unwrap_or_default();
        self.tried += 1;
        match self.nicks.get(self.tried) {
            Some(next) => {
                tracing::info!(network = %self.options.network, taken, next, "nick unavailable; trying the next one");
                self.nick = next.clone();
                actions.push(Action::Send(Command::NICK(next.clone())));
            }
            None => actions.push(Action::Refused(format!(
                "every configured nick ({}) is taken or refused",
                self.nicks.join(", ")
            ))),
        }
    }

    /// RPL_MONOFFLINE `[nick, targets]`: the configured nick is free again.
    fn monitored_offline(&mut self, args: &[String], actions: &mut Vec<Action>) {
        let freed = args.get(1).is_some_and(|list| {
            list.split(',').any(|t| {
                self.wanted_nick().is_some_and(|w| fold(t.split('!').next().unwrap_or(t)) == fold(w))
            })
        });
        if freed {
            self.take_back(actions);
        }
    }

    fn step(&mut self, step: Step, actions: &mut Vec<Action>) {
        match step {
            Step::Request(cap) => {
                actions.push(Action::Send(Command::CAP(None, CapSubCommand::REQ, None, Some(cap))));
            }
            Step::Listed => {
                if let Some(value) = self.caps.value("sts") {
                    let offer = sts::parse(value);
                    match (self.tls, offer.port, offer.duration) {
                        (false, Some(port), _) => actions.push(Action::Upgrade(port)),
                        (true, _, Some(duration)) => actions.push(Action::Policy(duration)),
                        _ => {}
                    }
                }
            }
            Step::New(caps) => {
                if caps.iter().any(|c| c == "sasl")
                    && self.registered
                    && self.account.is_none()
                    && self.login.is_none()
                {
                    // Services are back: the REQ that follows is answered by an ACK,
                    // and `settle` logs in then.
                    self.sasl_started = false;
                }
            }
            Step::Deleted(caps) => {
                if caps.iter().any(|c| c == "sasl") && self.login.is_some() {
                    self.login = None;
                    self.sasl_failed(
                        "the server withdrew SASL during the login (services went away)",
                        actions,
                    );
                }
            }
            Step::Enabled(_) | Step::Refused(_) => {}
        }
    }

    /// Once every capability request is answered: log in with SASL, or end negotiation.
    fn settle(&mut self, actions: &mut Vec<Action>) {
        if !self.caps.settled()
            || self.login.is_some()
            || actions.iter().any(|a| matches!(a, Action::Upgrade(_) | Action::Fail(_)))
        {
            return;
        }
        let Some(sasl) = self.options.sasl.clone() else {
            self.end_caps(actions);
            return;
        };
        if self.account.is_some() || self.sasl_started {
            self.end_caps(actions);
            return;
        }
        if !self.caps.enabled("sasl") {
            let why = if self.caps.offers("sasl") {
                "the server refused the sasl capability"
            } else {
                "the server does not offer SASL now (its services may be down)"
            };
            self.sasl_failed(why, actions);
            return;
        }
        self.sasl_started = true;
        let candidates = sasl.candidates(self.options.tls_options.client_cert.is_some());
        self.login = Some(Login::new(sasl, candidates, self.caps.value("sasl")));
        self.next_mechanism("", actions);
    }

    /// Starts the next mechanism, or gives SASL up.
    fn next_mechanism(&mut self, failed: &str, actions: &mut Vec<Action>) {
        let Some(login) = &mut self.login else { return };
        match login.next_mechanism() {
            Ok(mechanism) => {
                actions.push(Action::Send(Command::AUTHENTICATE(mechanism.name().to_owned())));
            }
            Err(error) => {
                self.login = None;
                let why = if failed.is_empty() { error.to_string() } else { format!("{failed}; {error}") };
                self.sasl_failed(&why, actions);
            }
        }
    }

    fn authenticate(&mut self, chunk: &str, actions: &mut Vec<Action>) {
        let Some(login) = &mut self.login else { return };
        match login.challenge(chunk) {
            Ok(lines) => {
                actions.extend(lines.into_iter().map(|line| Action::Send(Command::AUTHENTICATE(line))));
            }
            Err(error) => {
                actions.push(Action::Send(Command::AUTHENTICATE("*".to_owned())));
                self.login = None;
                self.give_up(&error.to_string(), actions);
            }
        }
    }

    /// SASL did not log the bot in: fall back to IDENTIFY, fail, or play logged out.
    fn sasl_failed(&mut self, why: &str, actions: &mut Vec<Action>) {
        if self.options.identify {
            tracing::warn!(network = %self.options.network, "SASL login failed ({why}); logging in with NickServ IDENTIFY instead");
            self.identify_pending = true;
            if self.registered && !self.identify_sent {
                self.identify(actions);
            }
            self.end_caps(actions);
            return;
        }
        self.give_up(why, actions);
    }

    /// No login: end the connection where login is required, else play logged out.
    fn give_up(&mut self, why: &str, actions: &mut Vec<Action>) {
        if self.options.login_required {
            tracing::error!(network = %self.options.network, "not logged in: {why}; disconnecting to try again (login is required: [irc.sasl] required)");
            actions.push(Action::Fail(why.to_owned()));
        } else {
            tracing::error!(network = %self.options.network, "not logged in: {why}; playing logged out ([irc.sasl] required = false)");
            self.end_caps(actions);
        }
    }

    fn end_caps(&mut self, actions: &mut Vec<Action>) {
        if !self.registered && self.caps.end() {
            actions.push(Action::Send(Command::CAP(None, CapSubCommand::END, None, None)));
        }
    }

    fn identify(&mut self, actions: &mut Vec<Action>) {
        let Some(sasl) = &self.options.sasl else { return };
        let Some(password) = &sasl.password else { return };
        self.identify_sent = true;
        actions.push(Action::Send(Command::PRIVMSG(
            "NickServ".to_owned(),
            format!("IDENTIFY {} {password}", sasl.account),
        )));
    }

    /// Waiting for NickServ's answer to IDENTIFY.
    pub fn identifying(&self) -> bool {
        self.identify_sent && self.account.is_none()
    }

    /// The configured nick, when the bot does not have it.
    fn wanted_nick(&self) -> Option<&str> {
        self.nicks.first().map(String::as_str).filter(|w| fold(w) != fold(&self.nick))
    }

    /// After registering under another nick: watch the configured one, or regain it.
    fn regain(&mut self, actions: &mut Vec<Action>) {
        let Some(wanted) = self.wanted_nick().map(str::to_owned) else { return };
        if self.options.regain && self.account.is_some() {
            actions.push(Action::Send(Command::PRIVMSG("NickServ".to_owned(), format!("REGAIN {wanted}"))));
        }
        if self.monitor {
            actions.push(Action::Send(Command::MONITOR("+".to_owned(), Some(wanted))));
        }
    }

    fn take_back(&mut self, actions: &mut Vec<Action>) {
        if let Some(wanted) = self.wanted_nick() {
            tracing::info!(network = %self.options.network, nick = wanted, "the configured nick is free; taking it back");
            actions.push(Action::Send(Command::NICK(wanted.to_owned())));
        }
    }
}
