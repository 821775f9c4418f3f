//! Who may open another connection to the endpoint: at most `connections_per_ip` at once
//! from one client address. A connection holds a [`Slot`] while it is served; dropping
//! it frees the place. A connection over the cap is answered with a 503 saying why and
//! closed, so one client's idle connections never take every place.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};

/// The count of open connections per client address.
#[derive(Clone, Debug)]
pub struct Admission {
    per_ip: usize,
    open: Arc<Mutex<HashMap<IpAddr, usize>>>,
}

/// One admitted connection's place; freed when dropped.
#[derive(Debug)]
pub struct Slot {
    ip: IpAddr,
    open: Arc<Mutex<HashMap<IpAddr, usize>>>,
}

impl Admission {
    /// At most `per_ip` connections from one address.
    pub fn new(per_ip: usize) -> Admission {
        Admission { per_ip, open: Arc::default() }
    }

    /// A place for a connection from `ip`, or `None` when that address already holds
    /// `per_ip` of them. An IPv4 address seen as IPv6 (`::ffff:a.b.c.d`) counts as itself.
    pub fn admit(&self, ip: IpAddr) -> Option<Slot> {
        let ip = ip.to_canonical();
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let count = open.entry(ip).or_insert(0);
        if *count >= self.per_ip {
            return None;
        }
        *count += 1;
        Some(Slot { ip, open: Arc::clone(&self.open) })
    }

    /// The cap per address.
    pub fn per_ip(&self) -> usize {
        self.per_ip
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = open.get_mut(&self.ip) {
            *count -= 1;
            if *count == 0 {
                open.remove(&self.ip);
            }
        }
    }
}

/// The whole answer to a connection over the cap: a 503 naming the limit.
pub fn refusal(per_ip: usize) -> String {
    let body = format!(
        "too many connections from your address: at most {per_ip} at once ([http] connections_per_ip); \
         close one or reuse it, then try again\n"
    );
    format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n\
         content-length: {}\r\nretry-after: 5\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_address_gets_its_own_places_and_a_dropped_slot_frees_one() {
        let admission = Admission::new(2);
        let one: IpAddr = "192.0.2.1".parse().expect("ip");
        let other: IpAddr = "192.0.2.2".parse().expect("ip");
        let first = admission.admit(one).expect("first");
        let _second = admission.admit(one).expect("second");
        assert!(admission.admit(one).is_none(), "a third from the same address is refused");
        assert!(admission.admit("::ffff:192.0.2.1".parse().expect("ip")).is_none(), "its IPv6 form too");
        let _elsewhere = admission.admit(other).expect("another address has its own places");
        drop(first);
        assert!(admission.admit(one).is_some(), "a closed connection frees its place");
    }

    #[test]
    fn the_refusal_is_a_whole_503_naming_the_setting() {
        let answer = refusal(8);
        assert!(answer.starts_with("HTTP/1.1 503 "), "{answer}");
        let (head, body) = answer.split_once("\r\n\r\n").expect("head and body");
        assert!(head.contains(&format!("content-length: {}", body.len())), "{head}");
        assert!(body.contains("at most 8") && body.contains("connections_per_ip"), "{body}");
    }
}
