//! When a connection last moved a byte: [`Watched`] wraps its stream and notes every
//! read and write in an [`Activity`], which the connection's task checks against
//! `[http] idle_timeout`.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Instant;

/// When a connection last read or wrote a byte.
#[derive(Clone, Debug)]
pub struct Activity {
    opened: Instant,
    /// Milliseconds from `opened` to the last byte moved.
    last: Arc<AtomicU64>,
}

impl Activity {
    /// A connection opened now.
    pub fn opened_now() -> Activity {
        Activity { opened: Instant::now(), last: Arc::new(AtomicU64::new(0)) }
    }

    fn touch(&self) {
        let now = u64::try_from(self.opened.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last.fetch_max(now, Ordering::Relaxed);
    }

    /// How long since the last byte (or since the connection opened).
    pub fn idle_for(&self) -> Duration {
        let last = Duration::from_millis(self.last.load(Ordering::Relaxed));
        self.opened.elapsed().saturating_sub(last)
    }
}

/// A stream whose reads and writes are noted in an [`Activity`].
#[derive(Debug)]
pub struct Watched<S> {
    inner: S,
    activity: Activity,
}

impl<S> Watched<S> {
    /// Wraps `inner`.
    pub fn new(inner: S, activity: Activity) -> Watched<S> {
        Watched { inner, activity }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Watched<S> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            this.activity.touch();
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Watched<S> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_write(cx, buf);
        if matches!(polled, Poll::Ready(Ok(written)) if written > 0) {
            this.activity.touch();
        }
        polled
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    #[tokio::test]
    async fn reads_and_writes_reset_the_idle_time() {
        let pause = Duration::from_millis(300);
        let (near, mut far) = tokio::io::duplex(64);
        let activity = Activity::opened_now();
        let mut watched = Watched::new(near, activity.clone());
        tokio::time::sleep(pause).await;
        assert!(activity.idle_for() >= pause, "nothing moved yet");
        far.write_all(b"x").await.expect("write");
        let mut byte = [0u8; 1];
        watched.read_exact(&mut byte).await.expect("read");
        assert!(activity.idle_for() < pause / 2, "a read is activity");
        tokio::time::sleep(pause).await;
        assert!(activity.idle_for() >= pause);
        watched.write_all(b"y").await.expect("write");
        assert!(activity.idle_for() < pause / 2, "a write is activity");
    }
}
