//! `+num_repeats_add_seed=true`: each materialized repeat carries its rollout index as a sampling
//! seed in `responses_create_params.metadata.extra_body`, a JSON *string* (vLLM's `extra_body`),
//! exactly as upstream writes it (`json.loads`, set `seed`, `json.dumps`).

use super::Row;
use crate::gym::keys::RESPONSES_CREATE_PARAMS;
use crate::gym::py;
use serde_json::Value;

/// Sets `seed` in the row's `extra_body`; the error says which part had the wrong shape.
pub fn add_seed(row: &mut Row, seed: u64) -> Result<(), String> {
    let Some(Value::Object(params)) = row.get_mut(RESPONSES_CREATE_PARAMS) else {
        return Err(
            "+num_repeats_add_seed: field `responses_create_params` must be an object".into(),
        );
    };
    let metadata = params
        .entry("metadata")
        .or_insert_with(|| Value::Object(Row::new()));
    let Value::Object(metadata) = metadata else {
        return Err(format!(
            "+num_repeats_add_seed: field `responses_create_params.metadata` must be an object, found {}",
            crate::json::describe(metadata)
        ));
    };
    let mut extra: Value = match metadata.get("extra_body") {
        None => Value::Object(Row::new()),
        Some(Value::String(text)) => serde_json::from_str(text).map_err(|e| {
            format!("+num_repeats_add_seed: `responses_create_params.metadata.extra_body` is not JSON: {e}")
        })?,
        Some(other) => {
            return Err(format!(
                "+num_repeats_add_seed: field `responses_create_params.metadata.extra_body` must be a JSON string, found {}",
                crate::json::describe(other)
            ))
        }
    };
    let Value::Object(fields) = &mut extra else {
        return Err(format!(
            "+num_repeats_add_seed: `responses_create_params.metadata.extra_body` must hold a JSON object, found {}",
            crate::json::describe(&extra)
        ));
    };
    fields.insert("seed".into(), Value::from(seed));
    metadata.insert("extra_body".into(), Value::String(py::json_dumps(&extra)));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(s: &str) -> Row {
        serde_json::from_str(s).unwrap()
    }

    #[test]
    fn seed_goes_into_extra_body_as_upstream_writes_it() {
        let mut r = row(r#"{"responses_create_params":{"input":[]}}"#);
        add_seed(&mut r, 2).unwrap();
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"responses_create_params":{"input":[],"metadata":{"extra_body":"{\"seed\": 2}"}}}"#
        );
        let mut r = row(
            r#"{"responses_create_params":{"metadata":{"k":"v","extra_body":"{\"top_k\":5,\"seed\":9}"}}}"#,
        );
        add_seed(&mut r, 0).unwrap();
        assert_eq!(
            r["responses_create_params"]["metadata"]["extra_body"],
            "{\"top_k\": 5, \"seed\": 0}"
        );
        let mut r = row(r#"{"responses_create_params":{"metadata":{"extra_body":"[1]"}}}"#);
        assert!(add_seed(&mut r, 0).unwrap_err().contains("found an array"));
        let mut r = row(r#"{"responses_create_params":{"metadata":null}}"#);
        assert!(add_seed(&mut r, 0).unwrap_err().contains("found null"));
    }
}
