#![no_main]
//! `wire_inspect`: see `fedhe_fuzz::check_wire_inspect`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| fedhe_fuzz::check_wire_inspect(data));
