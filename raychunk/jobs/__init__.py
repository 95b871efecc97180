"""The jobs, one module each: each resolves its settings once (``plan.resolve_plan``), opens its
corpus (``corpus``), declares its steps top to bottom and has ``pipeline.execute`` run them, and owns
its report. ``run`` (Parquet shards), ``price`` (the cost report), ``eval`` (retrieval per setting),
and ``preview`` (``raychunk parse`` / ``raychunk chunk``, in-process, no Ray)."""
