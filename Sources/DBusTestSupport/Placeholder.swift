// Placeholder until the target has code.
