# C++: g++, CMake and make as the exercises' CMakeLists.txt expect; ccache for the shared build cache (/cache);
# Boost date_time for gigasecond and meetup.
RUN apt-get update && apt-get install -y --no-install-recommends g++ make cmake ccache libboost-date-time-dev \
    && rm -rf /var/lib/apt/lists/*
