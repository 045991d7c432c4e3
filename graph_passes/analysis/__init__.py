"""Analyses passes share: op patterns and fusion kinds (:mod:`.fusion_kind`), fusion groups (:mod:`.fusion_groups`)."""
