#![no_main]
//! `wire_encrypted_vector`: see `fedhe_fuzz::check_wire_encrypted_vector`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| fedhe_fuzz::check_wire_encrypted_vector(data));
