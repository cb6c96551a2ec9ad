"""The ground: clock, ids, money, the refusals, deadlines, URLs, metadata and text rules. Imports nothing of Tender's."""
