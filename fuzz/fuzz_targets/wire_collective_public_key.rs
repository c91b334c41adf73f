#![no_main]
//! `wire_collective_public_key`: see `fedhe_fuzz::check_wire_collective_public_key`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| fedhe_fuzz::check_wire_collective_public_key(data));
