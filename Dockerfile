# The course in a Linux container, for laptops that have no Triton wheels (macOS, Windows):
# docs/container.md says how to use it. Two stages:
#   system  the OS, with what the README's set-up expects; the dev container starts from it and
#           sets up in the clone it mounts (.devcontainer/devcontainer.json)
#   course  (the default) the course copied in and set up, for plain `docker build` and `docker run`
# Both set up with .devcontainer/setup.sh, which runs the README's `make` step.

# CI's Python; scripts/check_wheels.py reads this line to check that every pin has its wheels.
ARG PYTHON_VERSION=3.11
FROM python:${PYTHON_VERSION}-slim-bookworm AS system

# make: set-up goes through the Makefile. bubblewrap: the grader's sandbox, which works in a
# container only with the flags in docs/container.md (without them the grader runs learners'
# own code without it). git: the tests read the course as committed. No compiler: no puzzle needs one.
RUN apt-get update \
    && apt-get install -y --no-install-recommends make bubblewrap git \
    && rm -rf /var/lib/apt/lists/*

# `jupyter lab notebooks/`, as the README says it, answers the host's browser on port 8888.
COPY .devcontainer/jupyter_server_config.py /etc/jupyter/jupyter_server_config.py
EXPOSE 8888

# A user, not root: the same uid as the first user of most Linux hosts, so files written to a
# mounted clone are theirs (VS Code changes it to the host user's where they differ). The course's
# folder is made theirs here: WORKDIR alone may make it root's, and set-up writes .venv in it.
ARG USER_UID=1000
RUN useradd --create-home --uid "${USER_UID}" --shell /bin/bash learner \
    && install -d -o learner -g learner /home/learner/triton-puzzles
USER learner
WORKDIR /home/learner/triton-puzzles

FROM system AS course
COPY --chown=learner:learner . .
# No pip cache in the image: it would keep the ~1 GB downloaded a second time.
RUN PIP_NO_CACHE_DIR=1 sh .devcontainer/setup.sh
# As if .venv were activated: python, jupyter and pytest are the course's.
ENV PATH=/home/learner/triton-puzzles/.venv/bin:${PATH}
CMD ["bash"]
