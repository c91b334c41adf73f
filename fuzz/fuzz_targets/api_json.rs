#![no_main]
//! `api_json`: see `fedhe_fuzz::check_api_json`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| fedhe_fuzz::check_api_json(data));
