"""Renderers: each turns the result model into one format; none runs learner code."""
