"""Text for people: what the commands print beside their records (notes, plots)."""
