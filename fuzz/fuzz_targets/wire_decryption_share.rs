#![no_main]
//! `wire_decryption_share`: see `fedhe_fuzz::check_wire_decryption_share`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| fedhe_fuzz::check_wire_decryption_share(data));
