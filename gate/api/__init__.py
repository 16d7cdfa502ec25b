"""The gate service: FastAPI app factory, one router per resource."""
