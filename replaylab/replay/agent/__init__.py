"""The replayed agent's side: models (the offline grounded replay model, scripts, litellm) and what
they read and write."""
