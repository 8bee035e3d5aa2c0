//! Accepting connections, for both front ends alike.
//!
//! A client that opens connections and then sends nothing, or one byte a
//! second, must not be able to hold the service: every connection counts
//! against a limit (past it, new ones wait in the kernel's backlog), must
//! finish its TLS handshake within a deadline, must send the opening bytes
//! of a request within the header timeout, and is closed after a spell with
//! no traffic either way. HTTP/1 additionally bounds reading request
//! headers and every request (its body included) is bounded by the request
//! timeout; those live with the protocol code. When accepting fails (the
//! process is out of file descriptors, say) the loop waits before trying
//! again, longer each time, and says so at most once a second.

use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, watch};
use tokio::time::Sleep;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

use crate::limits::Limits;

/// An accepted connection: plain or TLS, holding its place under the
/// connection limit until dropped, and closed when idle too long.
pub(crate) struct Connection {
    stream: Stream,
    idle_timeout: Duration,
    idle: Pin<Box<Sleep>>,
    /// Until the client has sent its opening bytes: the deadline for them
    /// and how many are still due.
    opening: Option<(Pin<Box<Sleep>>, usize)>,
    _permit: OwnedSemaphorePermit,
    peer: PeerSlot,
}

/// How many connections each client address holds open on one listener.
#[derive(Debug, Default)]
struct PeerCounts(parking_lot::Mutex<std::collections::HashMap<IpAddr, usize>>);

/// The client address a request came from, as its connection was accepted.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PeerAddr(pub(crate) IpAddr);

/// One connection's place in its peer's count, given back when dropped.
struct PeerSlot {
    counts: Arc<PeerCounts>,
    peer: IpAddr,
}

impl PeerCounts {
    /// A place for one more connection from `peer`, unless it holds `limit`.
    fn enter(self: &Arc<Self>, peer: IpAddr, limit: usize) -> Option<PeerSlot> {
        let mut counts = self.0.lock();
        let held = counts.entry(peer).or_default();
        if *held >= limit.max(1) {
            return None;
        }
        *held += 1;
        Some(PeerSlot {
            counts: self.clone(),
            peer,
        })
    }
}

impl Drop for PeerSlot {
    fn drop(&mut self) {
        let mut counts = self.counts.0.lock();
        if let Some(held) = counts.get_mut(&self.peer) {
            *held -= 1;
            if *held == 0 {
                counts.remove(&self.peer);
            }
        }
    }
}

/// Bytes a client must send within the header timeout of connecting: the
/// HTTP/2 connection preface is 24, and no HTTP/1 request line is shorter
/// than 16 (`GET / HTTP/1.1\r\n`). A client that trickles them is cut off
/// on either listener.
const OPENING_BYTES: usize = 16;

enum Stream {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

/// Accepts on `listener` until `stopped`, handing each connection over once
/// its TLS handshake (if any) is done. Handshakes run concurrently, so a
/// client that stalls in one does not hold up the others.
pub(crate) fn accept(
    listener: TcpListener,
    limits: &Limits,
    tls: Option<TlsAcceptor>,
    mut stopped: watch::Receiver<bool>,
) -> mpsc::Receiver<io::Result<Connection>> {
    let (accepted, incoming) = mpsc::channel(64);
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let peers = Arc::new(PeerCounts::default());
    let per_peer = limits.max_connections_per_peer;
    let (handshake, idle) = (limits.tls_handshake_timeout, limits.idle_timeout);
    let header_timeout = limits.header_read_timeout;
    tokio::spawn(async move {
        let mut backoff = AcceptBackoff::default();
        loop {
            let permit = tokio::select! {
                permit = permits.clone().acquire_owned() => permit.expect("never closed"),
                () = until_stopped(&mut stopped) => return,
            };
            let (tcp, peer) = tokio::select! {
                result = listener.accept() => match result {
                    Ok(accepted) => accepted,
                    Err(e) => {
                        let wait = backoff.failed(&e, Instant::now());
                        tokio::time::sleep(wait).await;
                        continue;
                    }
                },
                () = until_stopped(&mut stopped) => return,
            };
            backoff.succeeded();
            let Some(slot) = peers.enter(peer.ip(), per_peer) else {
                tracing::debug!(%peer, "closed: this address already holds {per_peer} connections");
                continue;
            };
            // Small request/response messages: Nagle's algorithm would hold
            // each for a delayed acknowledgement.
            let _ = tcp.set_nodelay(true);
            let opening = header_timeout;
            let connection = move |stream| Connection::new(stream, idle, opening, permit, slot);
            match &tls {
                None => {
                    if accepted
                        .send(Ok(connection(Stream::Plain(tcp))))
                        .await
                        .is_err()
                    {
                        return;
                    }
                }
                Some(acceptor) => {
                    let (acceptor, accepted) = (acceptor.clone(), accepted.clone());
                    tokio::spawn(async move {
                        match tokio::time::timeout(handshake, acceptor.accept(tcp)).await {
                            Ok(Ok(tls)) => {
                                let _ = accepted
                                    .send(Ok(connection(Stream::Tls(Box::new(tls)))))
                                    .await;
                            }
                            Ok(Err(e)) => tracing::debug!(%peer, "TLS handshake failed: {e}"),
                            Err(_) => tracing::debug!(
                                %peer,
                                "TLS handshake not finished within {handshake:?}; closed"
                            ),
                        }
                    });
                }
            }
        }
    });
    incoming
}

async fn until_stopped(stopped: &mut watch::Receiver<bool>) {
    let _ = stopped.wait_for(|s| *s).await;
}

impl Connection {
    fn new(
        stream: Stream,
        idle_timeout: Duration,
        opening_timeout: Duration,
        permit: OwnedSemaphorePermit,
        peer: PeerSlot,
    ) -> Self {
        Self {
            stream,
            idle_timeout,
            idle: Box::pin(tokio::time::sleep(idle_timeout)),
            opening: Some((Box::pin(tokio::time::sleep(opening_timeout)), OPENING_BYTES)),
            _permit: permit,
            peer,
        }
    }

    /// The client address.
    pub(crate) fn peer(&self) -> IpAddr {
        self.peer.peer
    }

    fn tcp(&self) -> &TcpStream {
        match &self.stream {
            Stream::Plain(tcp) => tcp,
            Stream::Tls(tls) => tls.get_ref().0,
        }
    }

    fn progressed(&mut self) {
        let deadline = tokio::time::Instant::now() + self.idle_timeout;
        self.idle.as_mut().reset(deadline);
    }

    /// Whether the idle deadline passed while the connection waited.
    fn idled_out(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.idle.as_mut().poll(cx));
        Poll::Ready(Err(io::Error::new(
            io::ErrorKind::TimedOut,
            format!("no traffic for {:?}", self.idle_timeout),
        )))
    }
}

impl tonic::transport::server::Connected for Connection {
    type ConnectInfo = tonic::transport::server::TcpConnectInfo;

    fn connect_info(&self) -> Self::ConnectInfo {
        self.tcp().connect_info()
    }
}

impl AsyncRead for Connection {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = match &mut self.stream {
            Stream::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        };
        let read = buf.filled().len() - before;
        if let Some((_, due)) = &mut self.opening {
            *due = due.saturating_sub(read);
            if *due == 0 {
                self.opening = None;
            }
        }
        if let Some((deadline, _)) = &mut self.opening
            && deadline.as_mut().poll(cx).is_ready()
        {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client did not open its request within the header timeout",
            )));
        }
        match polled {
            Poll::Ready(Ok(())) if read > 0 => {
                self.progressed();
                Poll::Ready(Ok(()))
            }
            Poll::Pending => self.idled_out(cx),
            other => other,
        }
    }
}

impl AsyncWrite for Connection {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let polled = match &mut self.stream {
            Stream::Plain(s) => Pin::new(s).poll_write(cx, data),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, data),
        };
        match polled {
            Poll::Ready(Ok(n)) => {
                if n > 0 {
                    self.progressed();
                }
                Poll::Ready(Ok(n))
            }
            Poll::Pending => self.idled_out(cx).map_ok(|()| 0),
            other => other,
        }
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.stream {
            Stream::Plain(s) => Pin::new(s).poll_flush(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.stream {
            Stream::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

/// How long to wait after a failed accept: doubling from 5 ms to 1 s while
/// failures continue, and a log line at most once a second counting those
/// not logged.
#[derive(Debug, Default)]
struct AcceptBackoff {
    wait: Option<Duration>,
    logged_at: Option<Instant>,
    unlogged: u64,
}

const FIRST_WAIT: Duration = Duration::from_millis(5);
const LONGEST_WAIT: Duration = Duration::from_secs(1);
const LOG_EVERY: Duration = Duration::from_secs(1);

impl AcceptBackoff {
    fn failed(&mut self, error: &io::Error, now: Instant) -> Duration {
        let wait = self.wait.map_or(FIRST_WAIT, |w| (w * 2).min(LONGEST_WAIT));
        self.wait = Some(wait);
        if self.should_log(now) {
            let unlogged = std::mem::take(&mut self.unlogged);
            tracing::warn!(
                "accepting a connection failed: {error}; retrying in {wait:?} ({unlogged} more failures since the last report)"
            );
        }
        wait
    }

    fn should_log(&mut self, now: Instant) -> bool {
        let due = self
            .logged_at
            .is_none_or(|at| now.duration_since(at) >= LOG_EVERY);
        if due {
            self.logged_at = Some(now);
        } else {
            self.unlogged += 1;
        }
        due
    }

    fn succeeded(&mut self) {
        self.wait = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_accepts_back_off_and_are_logged_once_a_second() {
        let mut backoff = AcceptBackoff::default();
        let error = io::Error::from_raw_os_error(24);
        let start = Instant::now();
        let waits: Vec<Duration> = (0..10).map(|_| backoff.failed(&error, start)).collect();
        assert_eq!(waits[0], FIRST_WAIT);
        assert!(waits.windows(2).all(|w| w[1] >= w[0]));
        assert_eq!(*waits.last().unwrap(), LONGEST_WAIT);
        // Ten failures in the same instant: one logged, nine counted.
        assert_eq!(backoff.unlogged, 9);
        assert!(backoff.should_log(start + LOG_EVERY));
        assert_eq!(backoff.unlogged, 9);
        backoff.succeeded();
        assert_eq!(backoff.failed(&error, start + LOG_EVERY * 3), FIRST_WAIT);
        assert_eq!(backoff.unlogged, 0);
    }
}
