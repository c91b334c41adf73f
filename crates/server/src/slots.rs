//! Per-caller caps on what one caller holds open at once (issue 45, items
//! 1 and 2): long polls ([`crate::Config::max_polls_per_caller`]) and
//! bodies being received ([`crate::Config::max_uploads_per_member`]). One
//! caller past its cap is refused (429) at once, naming the count, so no
//! member can pin the server's connections or its body budget alone.

use crate::problem::{ApiError, ApiResult};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// What a [`CallerSlots`] counts: names it in a refusal, with what to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotKind {
    /// Long polls (`?wait=`).
    LongPoll,
    /// Request bodies being received.
    Upload,
}

impl SlotKind {
    fn refusal(self, caller: &str, count: usize) -> String {
        match self {
            SlotKind::LongPoll => format!(
                "{caller} has {count} long polls open, the most one caller may hold; \
                 wait for one to end (or ask without ?wait=)"
            ),
            SlotKind::Upload => format!(
                "{caller} has {count} uploads being received, the most one member may send \
                 at once; send the next when one has finished"
            ),
        }
    }
}

/// How many slots of one [`SlotKind`] each caller holds.
#[derive(Debug)]
pub struct CallerSlots {
    kind: SlotKind,
    open: Mutex<HashMap<String, usize>>,
}

impl CallerSlots {
    /// No slot taken yet.
    pub fn new(kind: SlotKind) -> Arc<Self> {
        Arc::new(Self {
            kind,
            open: Mutex::new(HashMap::new()),
        })
    }

    /// How many slots `caller` holds.
    pub fn open(&self, caller: &str) -> usize {
        let open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        open.get(caller).copied().unwrap_or(0)
    }

    /// One more slot for `caller`, or a 429 naming the count when it holds
    /// `limit` already.
    pub fn take(self: &Arc<Self>, caller: &str, limit: usize) -> ApiResult<CallerSlot> {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let count = open.entry(caller.to_string()).or_default();
        if *count >= limit {
            let refusal = self.kind.refusal(caller, *count);
            if *count == 0 {
                open.remove(caller);
            }
            return Err(ApiError::too_many_requests(refusal));
        }
        *count += 1;
        Ok(CallerSlot {
            slots: self.clone(),
            caller: caller.to_string(),
        })
    }
}

/// One slot of a caller, given back on drop.
#[derive(Debug)]
pub struct CallerSlot {
    slots: Arc<CallerSlots>,
    caller: String,
}

impl Drop for CallerSlot {
    fn drop(&mut self) {
        let mut open = self.slots.open.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(count) = open.get_mut(&self.caller) {
            *count -= 1;
            if *count == 0 {
                open.remove(&self.caller);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caller_past_its_limit_is_refused_and_slots_come_back_on_drop() {
        let slots = CallerSlots::new(SlotKind::Upload);
        let a: Vec<_> = (0..3).map(|_| slots.take("alpha", 3).unwrap()).collect();
        let e = slots.take("alpha", 3).unwrap_err();
        assert!(
            e.detail.contains("alpha has 3 uploads being received"),
            "{}",
            e.detail
        );
        // Another caller is not affected.
        let b = slots.take("beta", 3).unwrap();
        assert_eq!((slots.open("alpha"), slots.open("beta")), (3, 1));
        drop(a);
        drop(b);
        assert_eq!((slots.open("alpha"), slots.open("beta")), (0, 0));
        assert!(slots.take("alpha", 0).is_err());
        assert!(slots.open.lock().unwrap().is_empty());
    }
}
