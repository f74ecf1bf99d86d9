// Harbor — the run loop. (Being built: see Docs/RunLoop.md.)
