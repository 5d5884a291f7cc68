"""shopgen's benchmarks: ratios against baselines measured in the same run (``make bench``)."""
