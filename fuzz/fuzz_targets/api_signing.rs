#![no_main]
//! `api_signing`: see `fedhe_fuzz::check_api_signing`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| fedhe_fuzz::check_api_signing(data));
