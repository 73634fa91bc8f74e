# C++: g++, CMake and make as the exercises' CMakeLists.txt expect; ccache for the shared build cache (/cache);
# Boost date_time for gigasecond and meetup.
RUN apt-get update && apt-get install -y --no-install-recommends g++ make cmake ccache libboost-date-time-dev \
    && rm -rf /var/lib/apt/lists/*
# CMake's toolchain checks for this compiler, done once (cpp/cmake-seed.sh): each grading's configure starts from them
COPY grader/cpp/cmake-seed.sh /opt/lab/cpp/cmake-seed.sh
RUN sh /opt/lab/cpp/cmake-seed.sh
