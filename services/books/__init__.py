"""The merchant's books: streamed exports and the daily settlement statement."""
