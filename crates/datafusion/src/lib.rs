//! Parquet Variant in DataFusion.
