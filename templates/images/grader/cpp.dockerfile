RUN apt-get update && apt-get install -y --no-install-recommends g++ make cmake ccache libboost-date-time-dev \
    && rm -rf /var/lib/apt/lists/*
