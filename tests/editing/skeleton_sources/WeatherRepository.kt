package com.example.weather.data

import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.withContext
import java.time.Duration
import java.time.Instant

data class Forecast(
    val city: String,
    val temperatureC: Double,
    val condition: String,
    val fetchedAt: Instant,
)

sealed class WeatherResult {
    data class Fresh(val forecast: Forecast) : WeatherResult()
    data class Cached(val forecast: Forecast, val age: Duration) : WeatherResult()
    data class Failed(val reason: String) : WeatherResult()
}

interface WeatherApi {
    suspend fun current(city: String): Forecast
}

class WeatherRepository(
    private val api: WeatherApi,
    private val maxAge: Duration = Duration.ofMinutes(15),
    private val clock: () -> Instant = Instant::now,
) {
    private val cache = mutableMapOf<String, Forecast>()

    suspend fun forecast(city: String, refresh: Boolean = false): WeatherResult {
        val key = city.trim().lowercase()
        val cached = cache[key]
        if (cached != null && !refresh) {
            val age = Duration.between(cached.fetchedAt, clock())
            if (age < maxAge) {
                return WeatherResult.Cached(cached, age)
            }
        }
        return try {
            val fresh = withContext(Dispatchers.IO) { api.current(city) }
            cache[key] = fresh
            WeatherResult.Fresh(fresh)
        } catch (error: Exception) {
            if (cached != null) {
                WeatherResult.Cached(cached, Duration.between(cached.fetchedAt, clock()))
            } else {
                WeatherResult.Failed(error.message ?: "unknown error")
            }
        }
    }

    fun forget(city: String) {
        cache.remove(city.trim().lowercase())
    }

    fun cachedCities(): List<String> {
        return cache.keys.sorted()
    }

    companion object {
        fun fahrenheit(celsius: Double): Double {
            return celsius * 9 / 5 + 32
        }

        fun describe(forecast: Forecast): String {
            val rounded = "%.1f".format(forecast.temperatureC)
            return "${forecast.city}: $rounded °C, ${forecast.condition}"
        }
    }
}
