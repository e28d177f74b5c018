pub mod engine;
pub mod ids;
pub mod net;
pub mod topology;
pub mod transport;
pub mod units;
