"""Guards over retrieved text: each module registers a ``guard`` component (``ragline.roles.Guard``)."""
