//! Python's `repr` of JSON values, as upstream's validator messages print them
//! (`'name'`, `None`, `1e+16`, `['a', 'b']`).

use super::tree::{Json, Kind};
use crate::gym::py::{self, num_repr, str_repr, Repr};

pub fn repr(v: &Json) -> String {
    py::repr(v)
}

impl Repr for Json<'_> {
    fn write_repr(&self, out: &mut String) {
        match self {
            Json::Null | Json::Skipped(Kind::Null) => out.push_str("None"),
            Json::Bool(b) => out.push_str(py::bool_repr(*b)),
            Json::Num(n) => out.push_str(&num_repr(*n)),
            Json::Str(s) => out.push_str(&str_repr(s)),
            Json::Arr(items) => py::write_list(out, items),
            Json::Obj(entries) => py::write_dict(out, entries.iter().map(|(k, v)| (k.as_ref(), v))),
            Json::Skipped(kind) => out.push_str(match kind {
                Kind::Bool => "<bool>",
                Kind::Num => "<number>",
                Kind::Str => "<string>",
                Kind::Arr(_) => "[...]",
                Kind::Obj(_) => "{...}",
                Kind::Null => "None",
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::Num;
    use std::borrow::Cow;

    #[test]
    fn matches_python_repr() {
        let list = Json::Arr(vec![
            Json::Str(Cow::Borrowed("a")),
            Json::Null,
            Json::Bool(true),
            Json::Num(Num::Int(3)),
        ]);
        assert_eq!(repr(&list), "['a', None, True, 3]");
        let obj = Json::Obj(vec![(
            Cow::Borrowed("type"),
            Json::Str(Cow::Borrowed("function")),
        )]);
        assert_eq!(repr(&obj), "{'type': 'function'}");
    }
}
