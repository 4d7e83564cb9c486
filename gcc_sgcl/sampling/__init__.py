"""Batched view building: counter-based keys (:mod:`.keys`), RWR walks (:mod:`.rwr`), induced subgraphs and the one
view builder (:mod:`.views`), batched eigen-features (:mod:`.spectral`), the ``ViewBatch`` container
(:mod:`.batch`) and the datasets that produce a whole batch per call (:mod:`.dataset`)."""
