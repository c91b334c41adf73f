//! RNS polynomial ring.
