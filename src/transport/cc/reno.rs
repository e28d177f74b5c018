//! Reno (NewReno): the window grows by one segment per acknowledged segment in slow start and
//! by one segment per window in congestion avoidance; loss halves it (the TCP sender's loss
//! recovery). ECN echoes are ignored.
//!
//! This is the default of every [`WindowCc`] hook, so the controller is empty.

use super::WindowCc;
use serde::Serialize;

/// NewReno: no ECN reaction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct Reno;

impl WindowCc for Reno {
    type State = ();
    fn state(&self) {}
}
