"""Operations: the scheduler that runs the refresh, alerts and report jobs."""
