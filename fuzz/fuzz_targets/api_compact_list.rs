#![no_main]
//! `api_compact_list`: see `fedhe_fuzz::check_api_compact_list`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| fedhe_fuzz::check_api_compact_list(data));
