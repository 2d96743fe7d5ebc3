# Jupyter in the course's container (Dockerfile): listen beyond the container, so the host's
# browser reaches it through the forwarded port, and open no browser (there is none inside).
# The token stays: anyone who can reach the port would otherwise run code as the learner.
c = get_config()  # noqa: F821 (Jupyter defines it when it reads this file)
c.ServerApp.ip = "0.0.0.0"
c.ServerApp.port = 8888
c.ServerApp.open_browser = False
