#![no_main]
//! `wire_public_key_share`: see `fedhe_fuzz::check_wire_public_key_share`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| fedhe_fuzz::check_wire_public_key_share(data));
