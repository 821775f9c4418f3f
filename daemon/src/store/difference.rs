//! Where two JSON values first differ: how start-up, the audit and the ratings check
//! name what a rebuilt table or summary disagrees with.

use serde_json::Value;

/// The first JSON path where two values differ.
pub(super) fn first_difference(a: &Value, b: &Value, path: String) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            keys.into_iter().find_map(|k| {
                first_difference(
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                    format!("{path}.{k}"),
                )
            })
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            x.iter().zip(y).enumerate().find_map(|(i, (p, q))| first_difference(p, q, format!("{path}[{i}]")))
        }
        _ if a == b => None,
        _ => Some(if path.is_empty() { "(whole table)".to_owned() } else { path }),
    }
}
