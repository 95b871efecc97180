"""The jobs, one module each: each starts or joins Ray, reads its inputs, calls ``pipeline.build`` and
owns its report. ``run`` (Parquet shards), ``price`` (the cost report), ``eval`` (retrieval per
setting), and ``preview`` (``raychunk parse`` / ``raychunk chunk``, in-process, no Ray)."""
