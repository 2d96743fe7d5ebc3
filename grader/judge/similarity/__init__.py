"""Similar submissions in a class: every student's learner part fingerprinted and compared with
every other's (find), and what was found, as the class page shows it (model)."""
