//! Typed indices into the simulator's arenas. Every component lives in a `Vec` and is named by
//! a small `Copy` id, never by a pointer.

macro_rules! id {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
        #[derive(serde::Serialize, serde::Deserialize)]
        pub struct $name(pub u32);
        impl $name {
            #[inline]
            pub fn idx(self) -> usize {
                self.0 as usize
            }
        }
        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}", self.0)
            }
        }
    };
}

id!(
    /// A node: hosts are `0..n_hosts`, switches follow.
    NodeId
);
id!(
    /// A port (one end of a full-duplex link). Each port owns the egress direction of its link.
    PortId
);
id!(
    /// A flow (TCP connection, UDP stream or RDMA queue pair).
    FlowId
);
