"""Request signing for the providers' official APIs (ACS3, TC3)."""
