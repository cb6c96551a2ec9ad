"""The payment engine: the invoice state machine and its vocabulary, quotes, checkout, polling, payments,
expiry and the events each move writes."""
