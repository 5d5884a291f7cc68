"""One verifier per environment, reward composition, trajectory replay and scoring."""
