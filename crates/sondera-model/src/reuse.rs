//! Copying a trajectory's state into the copy a store keeps of it, once per
//! step, without allocating what that copy already has room for: its
//! windows (pending calls, sources) slide by one element a step, so the
//! same positions hold strings of about the same length.

use std::collections::VecDeque;

/// Makes `target` equal to `source`, element by element, so each element
/// reuses the allocations of the one it replaces.
pub(crate) fn clone_deque_from<T: Clone>(target: &mut VecDeque<T>, source: &VecDeque<T>) {
    target.truncate(source.len());
    for (kept, new) in target.iter_mut().zip(source) {
        kept.clone_from(new);
    }
    let kept = target.len();
    target.extend(source.iter().skip(kept).cloned());
}

/// Makes `target` equal to `source`, copying only when they differ: the
/// maps and sets of a state change far less often than once a step, and
/// comparing allocates nothing.
pub(crate) fn clone_if_changed<T: Clone + PartialEq>(target: &mut T, source: &T) {
    if target != source {
        target.clone_from(source);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deque_becomes_its_source_whatever_the_lengths() {
        for (old, new) in [(0, 3), (3, 0), (2, 5), (5, 2), (4, 4)] {
            let mut target: VecDeque<String> = (0..old).map(|n| format!("old {n}")).collect();
            let source: VecDeque<String> = (0..new).map(|n| format!("new {n}")).collect();
            clone_deque_from(&mut target, &source);
            assert_eq!(target, source, "{old} elements copied from {new}");
        }
    }

    #[test]
    fn a_slid_window_keeps_its_buffers() {
        let mut target: VecDeque<String> = (0..4).map(|n| format!("call {n}")).collect();
        let buffers: Vec<*const u8> = target.iter().map(|s| s.as_ptr()).collect();
        let source: VecDeque<String> = (1..5).map(|n| format!("call {n}")).collect();
        clone_deque_from(&mut target, &source);
        assert_eq!(target, source);
        let after: Vec<*const u8> = target.iter().map(|s| s.as_ptr()).collect();
        assert_eq!(
            after, buffers,
            "each string was copied into the one it replaced"
        );
    }
}
