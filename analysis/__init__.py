"""AlienBench analysis: recompute, check and extend every number the authors report.

Public modules: :mod:`analysis.stats` (statistical primitives, spec section 3),
:mod:`analysis.data` (inputs R and A1), :mod:`analysis.main` (main analysis, spec 4 and 7.1),
:mod:`analysis.latex`, :mod:`analysis.check`, :mod:`analysis.reproduce`.
"""
