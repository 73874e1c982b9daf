//! Why a source row or a decision point did not become a pivot (docs/pivots.md "Pivot datasets": skip
//! reasons), and the audit record
//! written for each one to `<out stem>.skipped.jsonl`.

use serde_json::{Map, Value};

/// Every skip reason, in the order docs/pivots.md "Pivot datasets" lists them (row-level first, then
/// decision-point level).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum Reason {
    InvalidSourceRow,
    BelowMinReward,
    SourceGroupFiltered,
    MissingToolCallId,
    UnsupportedActionType,
    MultiToolCall,
    MalformedArguments,
    ToolNotInTools,
    NoAction,
    EmptyMessage,
    IncompleteTurn,
    NoUserMessage,
    UnmatchedCallInPrefix,
    DuplicatePivot,
    MessagePivotDisabled,
    DoomLoop,
    ToolError,
    SelfcheckFailed,
}

impl Reason {
    pub const ALL: [Reason; 18] = [
        Reason::InvalidSourceRow,
        Reason::BelowMinReward,
        Reason::SourceGroupFiltered,
        Reason::MissingToolCallId,
        Reason::UnsupportedActionType,
        Reason::MultiToolCall,
        Reason::MalformedArguments,
        Reason::ToolNotInTools,
        Reason::NoAction,
        Reason::EmptyMessage,
        Reason::IncompleteTurn,
        Reason::NoUserMessage,
        Reason::UnmatchedCallInPrefix,
        Reason::DuplicatePivot,
        Reason::MessagePivotDisabled,
        Reason::DoomLoop,
        Reason::ToolError,
        Reason::SelfcheckFailed,
    ];

    pub fn as_str(self) -> &'static str {
        use Reason::{
            BelowMinReward, DoomLoop, DuplicatePivot, EmptyMessage, IncompleteTurn,
            InvalidSourceRow, MalformedArguments, MessagePivotDisabled, MissingToolCallId,
            MultiToolCall, NoAction, NoUserMessage, SelfcheckFailed, SourceGroupFiltered,
            ToolError, ToolNotInTools, UnmatchedCallInPrefix, UnsupportedActionType,
        };
        match self {
            InvalidSourceRow => "invalid_source_row",
            BelowMinReward => "below_min_reward",
            SourceGroupFiltered => "source_group_filtered",
            MissingToolCallId => "missing_tool_call_id",
            UnsupportedActionType => "unsupported_action_type",
            MultiToolCall => "multi_tool_call",
            MalformedArguments => "malformed_arguments",
            ToolNotInTools => "tool_not_in_tools",
            NoAction => "no_action",
            EmptyMessage => "empty_message",
            IncompleteTurn => "incomplete_turn",
            NoUserMessage => "no_user_message",
            UnmatchedCallInPrefix => "unmatched_call_in_prefix",
            DuplicatePivot => "duplicate_pivot",
            MessagePivotDisabled => "message_pivot_disabled",
            DoomLoop => "doom_loop",
            ToolError => "tool_error",
            SelfcheckFailed => "selfcheck_failed",
        }
    }

    /// Whether the reason skips a whole source row (its audit record has no turn fields).
    pub fn is_row_level(self) -> bool {
        self <= Reason::MissingToolCallId
    }
}

/// Which index names the skipped turn in its source: `source_item_index` (Responses items) or
/// `source_message_index` (chat, conversational, generic).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexKind {
    Item,
    Message,
}

impl IndexKind {
    pub fn key(self) -> &'static str {
        match self {
            IndexKind::Item => "source_item_index",
            IndexKind::Message => "source_message_index",
        }
    }
}

/// Where a skipped turn sits; `None` for row-level skips.
pub struct TurnRef<'a> {
    pub source_index: usize,
    pub assistant_index: usize,
    /// The turn's function-call items (Responses form).
    pub calls: &'a [&'a Value],
}

/// The row's identity fields the audit repeats.
pub struct RowRef<'a> {
    pub trajectory_id: u64,
    pub uuid: Option<&'a Value>,
    pub task_index: Option<&'a Value>,
    pub rollout_index: Option<&'a Value>,
    pub metadata: Option<&'a Value>,
    pub index_kind: IndexKind,
}

/// One audit line (compact JSON and a newline), keys in a fixed order.
pub fn audit_record(
    row: &RowRef,
    turn: Option<&TurnRef>,
    reason: Reason,
    detail: Option<String>,
    out: &mut Vec<u8>,
) {
    let opt = |v: Option<&Value>| v.cloned().unwrap_or(Value::Null);
    let mut m = Map::new();
    m.insert("trajectory_id".into(), row.trajectory_id.into());
    m.insert("uuid".into(), opt(row.uuid));
    m.insert("_ng_task_index".into(), opt(row.task_index));
    m.insert("_ng_rollout_index".into(), opt(row.rollout_index));
    m.insert(
        row.index_kind.key().into(),
        turn.map(|t| t.source_index).into(),
    );
    m.insert(
        "source_assistant_index".into(),
        turn.map(|t| t.assistant_index).into(),
    );
    m.insert("reason".into(), reason.as_str().into());
    m.insert("detail".into(), detail.into());
    let calls = turn.map(|t| t.calls);
    m.insert("tool_call_count".into(), calls.map(<[_]>::len).into());
    m.insert(
        "tool_names".into(),
        calls
            .map(|c| {
                c.iter()
                    .map(|v| v.get("name").cloned().unwrap_or(Value::Null))
                    .collect::<Vec<_>>()
            })
            .into(),
    );
    m.insert(
        "tool_calls".into(),
        calls
            .map(|c| c.iter().map(|v| (*v).clone()).collect::<Vec<_>>())
            .into(),
    );
    m.insert("metadata".into(), opt(row.metadata));
    serde_json::to_writer(&mut *out, &Value::Object(m))
        .expect("serializing a JSON value cannot fail");
    out.push(b'\n');
}
