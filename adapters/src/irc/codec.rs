//! The IRC wire format: one message per line. Lines are read as UTF-8, invalid bytes
//! replaced; an empty line is skipped, and a line longer than [`MAX_LINE`] is dropped
//! whole rather than buffered without end. A message is written straight into the
//! connection's buffer and ends at its first line break, as the `irc` crate's own codec
//! ends it (text never carries a second command onto the wire).

use std::fmt::Write as _;

use bytes::BytesMut;
use irc::proto::Message;
use irc::proto::error::ProtocolError;
use tokio_util::codec::{Decoder, Encoder};

/// The longest line read, with its line break: IRCv3 allows 8,191 bytes of tags before
/// the 512 of the message itself; twice that is still only a server's mistake or malice.
pub const MAX_LINE: usize = 16 * 1024;

/// Reads and writes IRC messages, a line each.
#[derive(Debug, Default)]
pub struct LineCodec {
    /// How much of the buffer is known to hold no line break.
    searched: usize,
    /// The start of the buffer is the rest of a line too long to keep.
    discarding: bool,
}

impl Decoder for LineCodec {
    type Item = Message;
    type Error = ProtocolError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Message>, ProtocolError> {
        loop {
            let Some(offset) = src[self.searched..].iter().position(|&byte| byte == b'\n') else {
                if src.len() > MAX_LINE {
                    if !self.discarding {
                        warn_overlong();
                    }
                    self.discarding = true;
                    src.clear();
                    self.searched = 0;
                } else {
                    self.searched = src.len();
                }
                return Ok(None);
            };
            let line = src.split_to(self.searched + offset + 1);
            self.searched = 0;
            if std::mem::take(&mut self.discarding) {
                continue; // the end of a line dropped earlier
            }
            if line.len() > MAX_LINE {
                warn_overlong();
                continue;
            }
            if line.iter().all(|&byte| byte == b'\r' || byte == b'\n') {
                continue; // an empty line is ignored (RFC 1459, 2.3.1)
            }
            return String::from_utf8_lossy(&line).parse::<Message>().map(Some);
        }
    }
}

/// Logs a line dropped for its length (once per line).
fn warn_overlong() {
    tracing::warn!(limit = MAX_LINE, "the server sent a line longer than the limit; it is dropped");
}

impl Encoder<Message> for LineCodec {
    type Error = ProtocolError;

    fn encode(&mut self, message: Message, dst: &mut BytesMut) -> Result<(), ProtocolError> {
        let start = dst.len();
        write!(dst, "{message}").map_err(|_| std::io::Error::other("an IRC message could not be written"))?;
        // The message ends at its first line break (`\r\n`, `\r` or `\n`), which is kept.
        if let Some(at) = dst[start..].iter().position(|&byte| byte == b'\r' || byte == b'\n') {
            let at = start + at;
            let crlf = dst[at] == b'\r' && dst.get(at + 1) == Some(&b'\n');
            dst.truncate(at + if crlf { 2 } else { 1 });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use irc::proto::{Command, IrcCodec};

    use super::*;

    fn decode_all(codec: &mut LineCodec, src: &mut BytesMut) -> Vec<Message> {
        std::iter::from_fn(|| codec.decode(src).expect("a line the parser takes")).collect()
    }

    fn encoded(message: Message) -> BytesMut {
        let mut out = BytesMut::new();
        LineCodec::default().encode(message, &mut out).expect("a message is always written");
        out
    }

    #[test]
    fn messages_are_read_line_by_line_across_partial_reads() {
        let mut codec = LineCodec::default();
        let mut src = BytesMut::from(&b":alice!a@h PRIVMSG #t :!sta"[..]);
        assert!(decode_all(&mut codec, &mut src).is_empty());
        src.extend_from_slice(b"tus\r\nPING :x\r\n:bob!b@h NOTICE me :hi");
        let read = decode_all(&mut codec, &mut src);
        assert_eq!(read.len(), 2);
        assert_eq!(read[0].command, Command::PRIVMSG("#t".into(), "!status".into()));
        assert_eq!(read[1].command, Command::PING("x".into(), None));
        assert_eq!(&src[..], b":bob!b@h NOTICE me :hi");
    }

    #[test]
    fn empty_lines_are_skipped() {
        let mut codec = LineCodec::default();
        let mut src = BytesMut::from(&b"\r\n\nPING :x\r\n\r\n"[..]);
        let read = decode_all(&mut codec, &mut src);
        assert_eq!(read.iter().map(|m| &m.command).collect::<Vec<_>>(), [&Command::PING("x".into(), None)]);
        assert!(src.is_empty());
    }

    #[test]
    fn invalid_utf8_is_replaced_not_refused() {
        let mut codec = LineCodec::default();
        let mut src = BytesMut::from(&b":alice!a@h PRIVMSG #t :caf\xe9\r\n"[..]);
        let read = decode_all(&mut codec, &mut src);
        assert_eq!(read[0].command, Command::PRIVMSG("#t".into(), "caf\u{fffd}".into()));
    }

    #[test]
    fn a_line_over_the_limit_is_dropped_whole_and_reading_goes_on() {
        let mut codec = LineCodec::default();
        // In one buffer, and in pieces with no line break until far past the limit.
        let long = format!(":x PRIVMSG #t :{}\r\nPING :after\r\n", "a".repeat(MAX_LINE));
        let mut src = BytesMut::from(long.as_bytes());
        let read = decode_all(&mut codec, &mut src);
        assert_eq!(
            read.iter().map(|m| &m.command).collect::<Vec<_>>(),
            [&Command::PING("after".into(), None)]
        );

        let mut src = BytesMut::new();
        let mut read = Vec::new();
        for chunk in long.as_bytes().chunks(1000) {
            src.extend_from_slice(chunk);
            read.extend(decode_all(&mut codec, &mut src).into_iter().map(|m| m.command));
            assert!(src.len() <= MAX_LINE + 1000, "the buffer stays bounded: {}", src.len());
        }
        assert_eq!(read, [Command::PING("after".into(), None)]);
    }

    #[test]
    fn a_message_is_written_as_the_irc_crates_codec_writes_it() {
        let messages = [
            Message::from(Command::PRIVMSG("#t".into(), "alice: 3 coins".into())),
            Message::from(Command::NOTICE("bob".into(), "一二三".into())),
            // Text with a line break ends the line there, in either codec.
            Message::from(Command::PRIVMSG("#t".into(), "one\r\nQUIT :two".into())),
            Message::from(Command::PRIVMSG("#t".into(), "one\rQUIT".into())),
            Message::from(Command::PRIVMSG("#t".into(), "one\nQUIT".into())),
        ];
        for message in messages {
            let mut theirs = BytesMut::new();
            let mut codec = IrcCodec::new("utf-8").expect("a label the crate knows");
            codec.encode(message.clone(), &mut theirs).expect("the crate's codec writes it");
            assert_eq!(encoded(message), theirs);
        }
    }
}
