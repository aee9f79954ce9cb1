//! HTTP retry decisions (being written).
