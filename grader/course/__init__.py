"""The course: the author API that puzzle files import (:mod:`.puzzle`, :mod:`.case`, dtypes and
shape annotations) and the course on disk (:mod:`.loader`: its puzzles, solutions and stubs).
It imports nothing else of the grader, and no torch until a spec runs."""
