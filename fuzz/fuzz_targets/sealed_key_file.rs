#![no_main]
//! `sealed_key_file`: see `fedhe_fuzz::check_sealed_key_file`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| fedhe_fuzz::check_sealed_key_file(data));
