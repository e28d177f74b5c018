//! Integration tests, one binary (nexosim/matklad layout). Every test that runs a simulation
//! also checks byte conservation (`common::run`).

mod analytic;
mod attribution;
mod changed;
mod cli;
mod collectives;
mod common;
mod corpus;
mod dctcp;
mod determinism;
mod docs;
mod experiments;
mod fabric;
mod failures;
mod fuzz;
mod goal;
mod golden;
mod ideal;
mod layout;
#[cfg(feature = "mpi")]
mod mpi;
mod nic;
mod partition;
mod pcap;
mod pfabric;
mod rail;
mod rdma;
mod retire;
mod robust;
mod timeseries;
mod topology;
mod training;
mod validation;
mod workloads;
